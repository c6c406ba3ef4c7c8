"""The server side's entry point: the `outrider` command, the supervisor
behind `outrider up`, and the simulated fleet of `outrider demo`.

It imports the services and the gateway; they never import it, and neither
does the engine SDK (`outrider`).
"""
