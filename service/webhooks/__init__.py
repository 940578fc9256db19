"""Webhooks (issue 36): endpoints that are checkpoints on the log (service/store/webhooks.py),
the messages read from it (messages.py), their delivery (deliver.py), the registration's
verification (verify.py), and the signing (sign.py) and sending (transport.py) they use."""
