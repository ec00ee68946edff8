"""matplotlib figures (install the ``plots`` extra); one module per analysis."""
