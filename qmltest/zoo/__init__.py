"""The zoo: benchmark architectures, their training, and the catalogue of shipped models."""
