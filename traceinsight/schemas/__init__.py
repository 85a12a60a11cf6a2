"""The JSON schemas of the run folder (run.schema.json, timings.schema.json) and of the JSON
report (report.schema.json), and the run folder's two validators compiled from them
(``_run_validator.py``, ``_timings_validator.py``: written by tools/make_schema_validators.py,
each with the digest of its schema; ``runfolder`` compiles a schema itself when they differ)."""
