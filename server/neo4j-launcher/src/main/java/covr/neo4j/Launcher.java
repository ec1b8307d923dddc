package covr.neo4j;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;

/**
 * Runs Neo4j Community in this JVM until it is told to stop (SIGTERM or SIGINT).
 *
 * <p>Everything about the server (Bolt address, directories, memory, timeouts) is in the
 * configuration file the Python side writes, so that the settings object stays the one place
 * that holds them. The launcher only adds what a configuration file cannot say: the password of
 * the {@code neo4j} user, read from a 0600 file and applied through the system database on every
 * start, so the file is always the truth.
 *
 * <p>Usage: {@code Launcher HOME_DIR CONFIG_FILE PASSWORD_FILE}. Prints one line starting with
 * {@code covr-neo4j ready} once the databases are up; exits non-zero with a message otherwise.
 */
public final class Launcher {
  private Launcher() {}

  public static void main(String[] args) throws InterruptedException {
    if (args.length != 3) {
      System.err.println("usage: Launcher HOME_DIR CONFIG_FILE PASSWORD_FILE");
      System.exit(2);
    }
    Path home = Path.of(args[0]);
    Path config = Path.of(args[1]);
    String password;
    try {
      password = Files.readString(Path.of(args[2]), StandardCharsets.UTF_8).strip();
    } catch (IOException e) {
      System.err.println("covr-neo4j: cannot read the password file " + args[2] + ": " + e);
      System.exit(2);
      return;
    }
    DatabaseManagementService dbms;
    try {
      dbms = new DatabaseManagementServiceBuilder(home).loadPropertiesFromFile(config).build();
    } catch (RuntimeException e) {
      System.err.println("covr-neo4j: the server did not start: " + e);
      e.printStackTrace();
      System.exit(1);
      return;
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  dbms.shutdown();
                  stopped.countDown();
                },
                "covr-neo4j-shutdown"));
    try {
      dbms.database("system")
          .executeTransactionally(
              "ALTER USER neo4j SET PASSWORD $password CHANGE NOT REQUIRED",
              Map.of("password", password));
    } catch (RuntimeException e) {
      // Neo4j refuses to "change" a password to the one it already has: the file is the truth.
      if (!String.valueOf(e.getMessage()).contains("Old password and new password cannot be the same")) {
        System.err.println("covr-neo4j: cannot set the password of user neo4j: " + e);
        System.exit(1);
      }
    }
    System.out.println("covr-neo4j ready");
    System.out.flush();
    stopped.await();
  }
}
