"""The evaluator: receives milestone events over websockets, records them, decides verdicts."""
