import gatewayPackage from '../../package.json' with { type: 'json' };

/**
 * The gateway package's version, the OpenAPI document's `info.version`. Imported, not read at
 * run time, so the bundle in dist/ carries it.
 */
export const gatewayVersion: string = gatewayPackage.version;
