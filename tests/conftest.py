"""Every test signs and verifies with one known key, so golden files hold the same signatures on every run
(without it, `uibridge.core.provenance.default_keyring` picks a random key per process)."""

import os

os.environ.setdefault('UIBRIDGE_SECRET', 'uibridge-test-secret')
