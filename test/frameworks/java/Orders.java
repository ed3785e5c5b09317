/*
 * Orders.java -- idgen IDs through JDBC (pgjdbc) and Jackson, as a Java
 * service reads rows and writes them as JSON: java.test.js runs it and reads
 * what it prints with JavaScript's JSON.parse.
 *
 *	java -cp CLASSPATH Orders MODE JDBC-URL ARG
 *
 * MODE is one of
 *	plain       the rows named ARG ..., as a class with a long id, written
 *	            by a default ObjectMapper (the trap: JSON numbers)
 *	tostring    the same rows as a class whose id field carries
 *	            @JsonSerialize(using = ToStringSerializer.class)
 *	feature     the class of plain, written by a mapper with
 *	            JsonWriteFeature.WRITE_NUMBERS_AS_STRINGS
 *	generator   the class of plain, written by a mapper configured with
 *	            JsonGenerator.Feature.WRITE_NUMBERS_AS_STRINGS (deprecated
 *	            since Jackson 2.10, still in every 2.x)
 *	server      the rows as idgen_row_to_json() writes them on the server
 *	find        ARG is a JSON body a client sends, {"id": ...}: read into the
 *	            class of tostring, then the row of that id (a JSON array of
 *	            it, or [] when there is none)
 */

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.annotation.JsonSerialize;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.ser.std.ToStringSerializer;

public class Orders
{
	/* The row as a service maps it: Jackson writes a long as a JSON number. */
	public static class Order
	{
		public long id;
		public String name;
	}

	/* The recipe: the id written as a JSON string, and read from one. */
	public static class OrderView
	{
		@JsonSerialize(using = ToStringSerializer.class)
		public long id;
		public String name;
	}

	static final String BY_NAME =
		"SELECT id, name FROM orders WHERE name LIKE ? || ' %' ORDER BY id";

	static <T> List<T> rows(Connection conn, String sql, Object arg, Class<T> cls)
		throws Exception
	{
		List<T> out = new ArrayList<>();

		try (PreparedStatement st = conn.prepareStatement(sql))
		{
			st.setObject(1, arg);
			try (ResultSet rs = st.executeQuery())
			{
				while (rs.next())
				{
					T row = cls.getDeclaredConstructor().newInstance();

					cls.getField("id").setLong(row, rs.getLong("id"));
					cls.getField("name").set(row, rs.getString("name"));
					out.add(row);
				}
			}
		}
		return out;
	}

	@SuppressWarnings("deprecation")
	public static void main(String[] args) throws Exception
	{
		if (args.length != 3)
		{
			System.err.println("usage: Orders MODE JDBC-URL ARG");
			System.exit(2);
		}
		String mode = args[0];
		String arg = args[2];
		ObjectMapper mapper = new ObjectMapper();
		String json;

		try (Connection conn = DriverManager.getConnection(args[1]))
		{
			switch (mode)
			{
				case "plain":
					json = mapper.writeValueAsString(rows(conn, BY_NAME, arg, Order.class));
					break;
				case "tostring":
					json = mapper.writeValueAsString(rows(conn, BY_NAME, arg, OrderView.class));
					break;
				case "feature":
					json = JsonMapper.builder()
						.enable(JsonWriteFeature.WRITE_NUMBERS_AS_STRINGS)
						.build()
						.writeValueAsString(rows(conn, BY_NAME, arg, Order.class));
					break;
				case "generator":
					mapper.configure(JsonGenerator.Feature.WRITE_NUMBERS_AS_STRINGS, true);
					json = mapper.writeValueAsString(rows(conn, BY_NAME, arg, Order.class));
					break;
				case "server":
					{
						ArrayNode all = mapper.createArrayNode();

						try (PreparedStatement st = conn.prepareStatement(
								 "SELECT idgen_row_to_json(o) FROM orders AS o " +
								 "WHERE name LIKE ? || ' %' ORDER BY id"))
						{
							st.setString(1, arg);
							try (ResultSet rs = st.executeQuery())
							{
								while (rs.next())
									all.add(mapper.readTree(rs.getString(1)));
							}
						}
						json = mapper.writeValueAsString(all);
					}
					break;
				case "find":
					{
						OrderView body = mapper.readValue(arg, OrderView.class);

						json = mapper.writeValueAsString(rows(conn,
							"SELECT id, name FROM orders WHERE id = ?", body.id, OrderView.class));
					}
					break;
				default:
					throw new SQLException("unknown mode " + mode);
			}
		}
		System.out.println(json);
	}
}
