"""Outrider's engine SDK: the client (`outrider.client`), its errors, the
generated stubs (`outrider.v1`), and the wire helpers the services share
with it. It imports no server code; the `outrider` command is `launcher`."""
