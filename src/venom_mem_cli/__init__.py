"""The venom-mem command line, generated from the verb manifest, and the composition root."""
