"""S-KWS engines (paper Sections 3.2-4): CNGen, operator trees, forest, full mesh, partial mesh."""
