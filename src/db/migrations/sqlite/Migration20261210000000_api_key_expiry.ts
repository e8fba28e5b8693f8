import { Migration } from '@mikro-orm/migrations';

/** The sweeper deletes expired API keys in batches by their expiry (src/modules/maintenance/sweeper.ts). */
export class Migration20261210000000_api_key_expiry extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create index \`api_keys_expires_at_index\` on \`api_keys\` (\`expires_at\`);`);
  }

}
