import { Migration } from '@mikro-orm/migrations';

/**
 * Admin list-users at scale: a (column, id) index per sortable column, as on PostgreSQL.
 * SQLite has no trigram index; the search indexes here are on the same lower(column)
 * expressions the search filters on, so counting a search reads a narrow covering index
 * instead of the table.
 */
export class Migration20261126000000_list_users extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create index \`users_created_at_id_index\` on \`users\` (\`created_at\`, \`id\`);`);
    this.addSql(`create index \`users_updated_at_id_index\` on \`users\` (\`updated_at\`, \`id\`);`);
    this.addSql(`create index \`users_name_id_index\` on \`users\` (\`name\`, \`id\`);`);
    this.addSql(`create index \`users_username_id_index\` on \`users\` (\`username\`, \`id\`);`);
    this.addSql(`create index \`users_role_id_index\` on \`users\` (\`role\`, \`id\`);`);
    this.addSql(`create index \`users_banned_id_index\` on \`users\` (\`banned\`, \`id\`);`);
    this.addSql(`create index \`users_email_verified_id_index\` on \`users\` (\`email_verified\`, \`id\`);`);
    this.addSql(`create index \`users_email_search_index\` on \`users\` (lower(\`email\`));`);
    this.addSql(`create index \`users_name_search_index\` on \`users\` (lower(\`name\`));`);
  }

}
