"""Everything OpenAPI: documents and ``$ref``, schema translation, operations as tools."""
