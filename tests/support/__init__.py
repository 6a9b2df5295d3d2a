"""What the tests share: raw clients, server processes and peers to run against, fuzzers."""
