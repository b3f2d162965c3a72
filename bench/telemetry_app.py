"""The app `bench_telemetry.py --served` runs under uvicorn, one server per configuration: `create_app` with the
benchmark's agent, configured as `UIBRIDGE_BENCH_TELEMETRY` names (`absent`, `base`, `off`, `api`, `sdk`, ...;
see `bench_telemetry.CONFIGS`). Run from bench/: `uvicorn telemetry_app:app`."""

from __future__ import annotations

import os
import sys

from bench_telemetry import CONFIG_ENV, _app

_config = os.environ[CONFIG_ENV]
app = _app(_config)
if _config in ('absent', 'base') and any(name.split('.')[0] == 'opentelemetry' for name in sys.modules):
    raise SystemExit(f'{_config}: opentelemetry was imported')
