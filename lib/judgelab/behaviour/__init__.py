"""Judge behaviour studies that neither paper runs (notebook 12): does the judge read the text,
or something else? Recognition, planted instructions, length, self-preference and a judge panel.

A wing over both studies: it builds SAGE's and the narrative judges' requests with their own code,
so that an unperturbed request is byte for byte the one notebooks 02 and 09 sent (a cache hit).
"""
