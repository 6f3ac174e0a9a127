"""Server-side printing (kubernetes pkg/printers): the Tables a get or list asked `as=Table`
is answered with. tablegenerator.py is the TableGenerator and the registries' TableConvertor;
internalversion.py (pkg/printers/internalversion) registers the columns of the workloads,
nodes and the rest, services.py those of Services and EndpointSlices.
"""
