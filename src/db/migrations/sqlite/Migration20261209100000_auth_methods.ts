import { Migration } from '@mikro-orm/migrations';

/**
 * How a session was authenticated (RFC 8176 `amr` values, space-separated; null: not recorded,
 * as for every session older than this column), and what codes and refresh tokens carry of it
 * into ID tokens (`amr`, and the `acr` chosen at authorization; docs/oidc-provider.md).
 */
export class Migration20261209100000_auth_methods extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table \`sessions\` add column \`amr\` text null;`);
    this.addSql(`alter table \`oauth_codes\` add column \`amr\` text null;`);
    this.addSql(`alter table \`oauth_codes\` add column \`acr\` text null;`);
    this.addSql(`alter table \`oauth_refresh_tokens\` add column \`amr\` text null;`);
    this.addSql(`alter table \`oauth_refresh_tokens\` add column \`acr\` text null;`);
  }

}
