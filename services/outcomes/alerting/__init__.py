"""Alerts (DESIGN §10): evaluated after every sweep and on a timer, stored
with an outbox of their transitions, and delivered to a signed webhook."""
