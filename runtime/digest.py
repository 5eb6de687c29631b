"""SHA-256, the digest of the artifact cache's keys and of stored files; `hashlib` loads with the first digest."""


def sha256(data=b""):
    """`hashlib.sha256(data)`: a hash object (`update`, `hexdigest`)."""
    # start-up cost: hashlib loads OpenSSL's libcrypto, a tenth of what tfn's own modules cost `import tfn`;
    # eager programs never hash, a compile's cache key does
    import hashlib

    return hashlib.sha256(data)
