"""Running a command: budgets, where results are written, resumable checkpoints and progress lines."""
