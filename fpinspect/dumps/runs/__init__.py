"""Runs on disk: run folders and their naming (:mod:`.sources`, :mod:`.runfolder`), whole dump
trees (ranks x graphs x steps) paired leaf by leaf (:mod:`.runtree`), and the graphs of each leaf
(:mod:`.leafgraphs`)."""
