"""Private helpers of the ``rest`` loader: documents and ``$ref`` (``documents``), schema translation
(``schemas``) and operation conversion (``operations``). Not a public API."""
