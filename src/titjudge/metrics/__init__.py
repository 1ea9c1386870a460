"""Pairwise accuracy, rank correlations, nDCG, significance, leaderboard."""
