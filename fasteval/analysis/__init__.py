"""Analyses built on the engine: correlations, information measures, histograms, studies, fusion."""
