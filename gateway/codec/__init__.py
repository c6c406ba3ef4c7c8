"""Each context's messages to the gateway's JSON and back, one module per context.

A route decodes its parameters and body into a request with its context's
codec, calls the context, and answers with what the codec makes of the
reply; the route itself builds no message and shapes no JSON.
"""
