"""Reports of results for people, below both front ends: the HTML page of a comparison."""
