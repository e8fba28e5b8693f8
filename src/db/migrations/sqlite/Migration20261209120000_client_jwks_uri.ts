import { Migration } from '@mikro-orm/migrations';

/** Where a private_key_jwt client publishes its public keys (RFC 7591 `jwks_uri`; src/modules/oidc-provider/remote-jwks.ts). */
export class Migration20261209120000_client_jwks_uri extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table \`oauth_clients\` add column \`jwks_uri\` text null;`);
  }

}
