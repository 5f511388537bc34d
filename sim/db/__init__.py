"""The database layer: an Oracle-like instance (sessions, LGWR, buffer cache, ...).

It sees the machine only through the OS (dispatcher, devices); it never knows which
machine it runs on.
"""
