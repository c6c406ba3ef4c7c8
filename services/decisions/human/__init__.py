"""Human decisions: input people wrote elsewhere, made durable before an agent acts.

A subject (a booking, a proposal) may have people commenting on it somewhere
else: an issue tracker, a chat thread. Before an agent takes the subject on,
everything written there since the last look is imported as a human
decision, so the agent never resumes from an older intent while newer human
input is waiting.

The same rooms as a context: `service` (the RPCs), `codec` (the wire),
`rules` (pure), `reconcile` (the units of work), `store` (SQL) and `sources`
(the feeds read before a lease).
"""
