import { Migration } from '@mikro-orm/migrations';

/** The public keys of a private_key_jwt client (RFC 7591 `jwks`; src/modules/oidc-provider/client-assertion.ts). */
export class Migration20261209110000_client_jwks extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table \`oauth_clients\` add column \`jwks\` text null;`);
  }

}
