"""Real faults in QNN models (issue 62): a catalogue of fault kinds from public sources
(data/faults/catalogue.toml) and, per kind, a transform that turns a correct model into the faulty
one. Used to ask whether mutation scores predict real-fault detection (benchmarks/realfaults.py)."""
