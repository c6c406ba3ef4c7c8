"""`outrider demo`: a small logistics backend and a simulated fleet that drive a
running Outrider through the engine client, so the whole loop shows in minutes."""
