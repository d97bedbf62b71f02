"""Generation strategies: search (QuanForge Algorithm 1), directed and exhaustive sites, sampling and
--precision rounds, and the run state that feeds workers."""
