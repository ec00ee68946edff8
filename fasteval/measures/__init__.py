"""Measures as values: the family registry and the name parser."""
