"""Mutation testing: operators (pure IR -> IR, in a registry), statistics, generation, scoring."""
