"""Run folders: one module for every command that writes runs (run.json, results.jsonl, lock,
--force, resume), the result cache and the reuse rules (--iterate, --changed-since, --shard)."""
