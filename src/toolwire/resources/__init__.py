"""Resources: fixed and templated (RFC 6570) URIs, their contents, and template matching."""
