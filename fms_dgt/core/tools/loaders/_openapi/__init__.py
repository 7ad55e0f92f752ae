"""Private helpers of the ``rest`` loader; not a public API.

``documents`` reads spec files and URLs and resolves ``$ref``; ``schemas`` translates OpenAPI
schemas to self-contained Draft 2020-12; ``operations`` turns one operation into a tool's fields.
"""
