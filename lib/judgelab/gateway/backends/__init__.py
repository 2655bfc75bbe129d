"""Backends: the only code that sends bytes to a model.

Each backend implements :class:`~judgelab.gateway.backends.base.Backend`: ``complete`` one
prepared conversation and classify its errors as transient (retry) or permanent (record).
"""
