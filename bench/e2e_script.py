"""What both end-to-end servers stream: the same `DELTAS` text deltas, cycling through `TOKENS`."""

DELTAS = 500
TOKENS = [' the', ' weather', ' in', ' Paris', ' is', ' mild', ',', ' 21', ' °C', '.\n']
