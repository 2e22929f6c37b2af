export { Storage, type StoreLocation } from "./open";
export { Dialect, fromJson, toNumber, type ColumnTypes, type DialectName } from "./dialect";
export { migrate, hasColumn, MigrationError, type MigrationStep, type StoreSchema } from "./migrate";
export { secondsUntilRoom } from "./window";
