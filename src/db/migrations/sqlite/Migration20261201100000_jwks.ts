import { Migration } from '@mikro-orm/migrations';

/** JWT signing keys (src/db/entities/jwks-key.ts). */
export class Migration20261201100000_jwks extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table \`jwks_keys\` (\`id\` text not null primary key, \`epoch\` integer not null, \`alg\` text not null, \`public_key\` text not null, \`private_key\` text not null, \`created_at\` datetime not null, \`signs_until\` datetime not null);`);
    this.addSql(`create unique index \`jwks_keys_epoch_unique\` on \`jwks_keys\` (\`epoch\`);`);
  }

}
