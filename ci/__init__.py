"""Scripts and modules of the CI harness (``python3 -m ci.tiers``, ``ci.docker_images``)."""
