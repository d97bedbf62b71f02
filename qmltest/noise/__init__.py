"""Noise models from TOML configs: channels on Aer, crosstalk and random insertion as circuit passes."""
