"""The `tfn` MLIR dialect: the op table, its IRDL definition and builders."""
