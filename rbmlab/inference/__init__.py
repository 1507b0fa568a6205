"""Sampling and inference routines shared by learners and evaluators."""
