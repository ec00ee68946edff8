"""Sub-commands of ``fasteval`` beyond eval/ingest (one module per topic, registered in cli.py)."""
