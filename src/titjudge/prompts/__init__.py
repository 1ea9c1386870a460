"""Prompt templates as versioned text files, loaded by name with their hash."""
