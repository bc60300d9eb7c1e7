import { JwtAuthenticator, OffAuthenticator, StaticTokenAuthenticator, TokenInfoAuthenticator } from './authenticators.js';
export function createAuthenticator(config, clock) {
    switch (config.auth) {
        case 'off':
            return new OffAuthenticator(config.adminClientId);
        case 'static':
            return StaticTokenAuthenticator.fromFile(config.authTokensFile, config.adminClientId);
        case 'tokeninfo':
            return new TokenInfoAuthenticator({
                url: config.authTokenInfoUrl,
                adminClientId: config.adminClientId,
                cacheMs: config.authTokenInfoCacheMs,
                timeoutMs: config.authTimeoutMs,
                nowMs: () => clock.nowMs(),
            });
        case 'jwt':
            return new JwtAuthenticator({
                jwksUrl: config.authJwksUrl,
                key: config.authJwtKey,
                issuer: config.authJwtIssuer,
                audience: config.authJwtAudience,
                uidClaim: config.authJwtUidClaim,
                typeClaim: config.authJwtTypeClaim,
                adminClientId: config.adminClientId,
            });
        default:
            throw new Error(`unknown auth mode ${String(config.auth)}`);
    }
}
//# sourceMappingURL=create.js.map