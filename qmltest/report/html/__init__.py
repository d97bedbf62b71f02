"""Self-contained HTML reports (one folder, no network) built from the JSON reports alone."""
