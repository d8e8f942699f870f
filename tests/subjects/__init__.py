"""Small outside subjects for the `check` tests, written as a new user would."""
