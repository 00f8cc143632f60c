"""What is read off the machine itself: app metadata from app bundles and desktop entries."""
